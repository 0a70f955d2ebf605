"""The shared reader of the notebooks' exercises (solutions.py), on code written here."""

from solutions import run, starting_code, with_solution


def test_with_solution_replaces_an_assignment_and_a_keyword_in_place():
    code = 'def f(n):\n    size = 32  # edit me: é\n    return g(mode="a", count=size)\n'
    assert with_solution(code, 'size = 32 // n\nmode = "b"') == (
        'def f(n):\n    size = 32 // n  # edit me: é\n    return g(mode="b", count=size)\n')


def test_run_stops_once_the_names_are_defined_and_drops_what_it_prints():
    assert run("x = 1\nprint(x)\ny = x + 1\nraise SystemExit", "x", "y") == (1, 2)


def test_starting_code_leaves_out_the_check_call_however_it_is_wrapped():
    code = starting_code("ch8.not_input_bound")  # its check call spans three lines
    assert "def my_pipeline(" in code and "check(" not in code
