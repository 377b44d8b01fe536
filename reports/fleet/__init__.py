"""The fleet: many runs analysed in parallel (Ray) into Apache Iceberg tables (pyiceberg), and
the reports and SQL over them (reports/fleet/README.md)."""
