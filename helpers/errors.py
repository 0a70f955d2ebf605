"""The course's one error type. A leaf module: it imports nothing of the course, so any module can use it."""


class CourseError(Exception):
    """A mistake the learner can fix; the message says which call, what was wrong and what to do."""
