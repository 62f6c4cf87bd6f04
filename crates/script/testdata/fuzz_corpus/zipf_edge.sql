\set x random_zipfian(1, 9223372036854775806, 1.001) + permute(-1, 1) + hash(:x)
