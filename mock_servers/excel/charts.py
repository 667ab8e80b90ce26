"""Native Excel charts built from a block of cells: first column = categories (x values),
first row = series names, each further column = one series."""

from __future__ import annotations

from typing import Literal

from openpyxl.chart import AreaChart, BarChart, LineChart, PieChart, Reference, ScatterChart, Series
from openpyxl.chart._chart import ChartBase
from openpyxl.worksheet.worksheet import Worksheet

from mock_servers.core.errors import invalid
from mock_servers.excel.areas import Box
from mock_servers.excel.limits import MAX_LABEL, MAX_SERIES, check_text

ChartType = Literal["line", "bar", "pie", "scatter", "area"]
_KINDS: dict[str, type[ChartBase]] = {
    "line": LineChart, "bar": BarChart, "pie": PieChart, "scatter": ScatterChart, "area": AreaChart,
}


def build_chart(ws: Worksheet, data: Box, kind: ChartType, title: str | None,
                x_title: str | None, y_title: str | None) -> ChartBase:
    """A chart over `data` on `ws`. A single column is one series without categories."""
    if data.rows < 2:
        raise invalid("data_range needs a header row and at least one data row")
    if kind == "scatter" and data.cols < 2:
        raise invalid("a scatter chart needs an x column and at least one y column")
    series = data.cols - 1 if data.cols > 1 else 1
    if series > MAX_SERIES:
        raise invalid(f"data_range {data.a1} makes {series} series; a chart holds at most "
                      f"{MAX_SERIES}")
    for label, text in (("title", title), ("x_axis", x_title), ("y_axis", y_title)):
        if text is not None:
            check_text(text, label, MAX_LABEL)
    chart = _KINDS[kind]()
    if data.cols == 1:
        chart.add_data(Reference(ws, min_col=data.min_col, min_row=data.min_row,
                                 max_row=data.max_row), titles_from_data=True)
    elif kind == "scatter":
        _add_scatter_series(chart, ws, data)
    else:
        chart.add_data(Reference(ws, min_col=data.min_col + 1, min_row=data.min_row,
                                 max_col=data.max_col, max_row=data.max_row), titles_from_data=True)
        chart.set_categories(_categories(ws, data))
    if title:
        chart.title = title
    if kind != "pie":
        chart.x_axis.title = x_title
        chart.y_axis.title = y_title
        chart.x_axis.delete = False
        chart.y_axis.delete = False
    return chart


def _categories(ws: Worksheet, data: Box) -> Reference:
    return Reference(ws, min_col=data.min_col, min_row=data.min_row + 1, max_row=data.max_row)


def _add_scatter_series(chart: ChartBase, ws: Worksheet, data: Box) -> None:
    xs = _categories(ws, data)
    for col in range(data.min_col + 1, data.max_col + 1):
        ys = Reference(ws, min_col=col, min_row=data.min_row, max_row=data.max_row)
        chart.series.append(Series(ys, xs, title_from_data=True))
