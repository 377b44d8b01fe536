"""Errors and recovery: controller outages, the commands they cancelled and the I/O they held
(reports/recovery/README.md)."""
