SELECT no_such_column FROM io
