"""ntscope.reports.plots: what the three HTML pages (report, compare, interference) share: the one
stage -> colour mapping, the Vega-Lite charts (built with Altair from rows the SQL views
computed), and the self-contained page that draws them offline (Vega and Vega-Lite
inlined, no network). Renders only: every number comes from sql/."""
