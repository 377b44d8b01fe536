-- requires: none

-- The default group of the reports, one spelling for analyze (report/io_selected), compare's
-- input and its verdict. Another --group-by is built by reports/report/spec.py in the same form
-- ('field=value', joined by ', ').

-- type_size_group_key(io_type, size_bytes): the group key of an I/O type and size
--   'type=<io_type, ? unknown>, size=<bytes>', e.g. 'type=read, size=4096'
CREATE OR REPLACE MACRO type_size_group_key(io_type, size_bytes) AS
    'type=' || coalesce(io_type, '?') || ', size=' || size_bytes;
