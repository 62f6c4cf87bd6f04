\set post random_zipfian(1, :posts, :skew)
update post set views_count = views_count + 1 where id = :post;
