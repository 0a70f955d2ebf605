import pytest

from helpers import CourseError
from helpers.tables import Table


def test_text_rendering_aligns_columns_and_formats_floats():
    table = Table(["device", "median_s"], [["/CPU:0", 0.123456789], ["/GPU:0", 12]], title="matmul")
    assert str(table) == (
        "matmul\n"
        "device  median_s\n"
        "------  --------\n"
        "/CPU:0  0.1235\n"
        "/GPU:0  12"
    )
    assert repr(table) == str(table)


def test_text_rendering_without_title_starts_with_header():
    table = Table(["a", "long column"], [[1, 2]])
    lines = str(table).splitlines()
    assert lines == ["a  long column", "-  -----------", "1  2"]


def test_cells_are_strings_and_columns_are_strings():
    table = Table([1, 2], [[None, 1.0e-7]])
    assert table.columns == ["1", "2"]
    assert table.rows == [["None", "1e-07"]]


def test_html_escapes_and_has_caption_header_and_body():
    table = Table(["x<y", "b"], [["a&b", "<i>"]], title="T & co")
    assert table._repr_html_() == (
        "<table><caption>T &amp; co</caption>"
        "<thead><tr><th>x&lt;y</th><th>b</th></tr></thead>"
        "<tbody><tr><td>a&amp;b</td><td>&lt;i&gt;</td></tr></tbody></table>"
    )


def test_html_without_title_has_no_caption():
    assert "<caption>" not in Table(["a"], [["1"]])._repr_html_()


def test_empty_table_renders_header_only():
    table = Table(["a", "b"], [])
    assert str(table).splitlines() == ["a  b", "-  -"]


@pytest.mark.parametrize("row", [[1], [1, 2, 3]])
def test_row_of_wrong_length_is_rejected(row):
    with pytest.raises(CourseError, match=rf"has {len(row)} cells, expected 2; give one value per column"):
        Table(["a", "b"], [[1, 2], row])
