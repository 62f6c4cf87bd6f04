\set x 1 \
