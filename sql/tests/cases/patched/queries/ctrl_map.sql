SELECT * FROM ctrl_map
