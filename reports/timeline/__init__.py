"""ntscope.reports.timeline: report/timeline.perfetto-trace, Perfetto's protobuf trace of one
run's I/Os, queues, devices and CPUs, from the timeline_* views."""
