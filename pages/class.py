"""Class: the teacher's projector (code, QR, questions, live tally) and the students' laptops
(join, follow, answer)."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard.classroom import seat, student, teacher
from dashboard.text import plain

st.title("Class")
refused = seat.open_private_link()  # the teacher's private link, opened on another device
if refused:
    st.error(plain(refused), icon=":material/error:")
joining = st.session_state.pop(seat.PENDING_JOIN, None)  # a join link: /class?join=CODE
me, mine = seat.teacher(), seat.student()
gone = st.session_state.pop("class_gone", None)  # the teacher's class went
if gone:
    st.info(plain(f"{gone} Start or join another."), icon=":material/info:")
ended = st.session_state.pop(seat.ENDED_KEY, None)  # the student's class went
if ended:
    st.info(plain(ended), icon=":material/event_busy:")

if joining is not None and (mine is None or mine.code != joining):
    student.show_join(joining, check=True)  # a wrong code in the link says so at once
elif mine is not None and (me is None or joining is not None):
    student.show(mine)
elif me is not None:
    st.set_page_config(initial_sidebar_state="collapsed")  # the projector's width for the class
    teacher.show(me)
else:
    left, right = st.columns(2, gap="large")
    with left:
        student.show_join()
    with right:
        teacher.show_start()
seat.write_cookies()
