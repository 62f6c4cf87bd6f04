\set x 1e308 * 1e308 - 1e308 * 1e308
\set y int(:x)
