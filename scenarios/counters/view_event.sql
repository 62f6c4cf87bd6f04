\set post random_zipfian(1, :posts, :skew)
with e as (insert into view_event (post_id) values (:post) returning post_id)
insert into view_log select post_id from e;
