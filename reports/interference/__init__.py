"""ntscope interference: streams of one run, who waited behind whom on queues and devices,
queue depth over time (the intf_* views of sql/interference/*.sql), rendered."""
