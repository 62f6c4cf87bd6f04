\set key random_zipfian(1, 100000 * :scale, 1.1)
\set views random(1, 3)
update post_stats set view_count = view_count + :views where post_id = :key;
