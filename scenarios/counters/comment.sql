\set post random_zipfian(1, :posts, :skew)
insert into comment (post_id, body) values (:post, md5(random()::text));
