"""How much a person may give the class store: the length of each text, a question's choices,
lines of working and table, which the tables' columns and the checks of what is typed share.
Plain numbers: nothing here imports anything.
"""

NICKNAME_CHARS, PROMPT_CHARS, CHOICE_CHARS, ANSWER_CHARS, VIEW_CHARS = 40, 2000, 200, 200, 2000
MAX_CHOICES = 26
MAX_WORKING = 40  # lines of working per question
MAX_GIVEN = 64  # rows and columns of a question's table: a lesson's largest T is 64
