"""Interference as a section of another report: compare shows its RUN side's interference
(document, plot rows, text and HTML section) through this one module, so what interference
offers other reports is named here and nowhere else."""
from ntscope.reports.interference.model import interference_model as document
from ntscope.reports.interference.plot_data import build as plot_rows
from ntscope.reports.interference.render_html import interference_section as html_section
from ntscope.reports.interference.render_text import interference_text as text

__all__ = ["document", "plot_rows", "html_section", "text"]
