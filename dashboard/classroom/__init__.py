"""Class mode: the class store (teacher and student views come with the UI stage).

Plain Python over SQLAlchemy Core, importable without Streamlit; the contract is in
docs/classroom.md.
"""

from dashboard.classroom.database import default_url
from dashboard.classroom.store import (
    ClassInfo,
    ClassStore,
    Question,
    RateLimited,
    Tally,
    UnknownClass,
    View,
)

__all__ = [
    "ClassInfo",
    "ClassStore",
    "Question",
    "RateLimited",
    "Tally",
    "UnknownClass",
    "View",
    "default_url",
]
