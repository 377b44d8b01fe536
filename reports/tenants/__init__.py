"""Tenants and classes: who each I/O was for, per second (reports/tenants/README.md)."""
