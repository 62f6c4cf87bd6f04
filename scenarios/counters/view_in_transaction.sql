-- What an ORM view does (Django's F("views") + 1 in transaction.atomic(), SQLAlchemy's
-- Session.begin()): the increment, then a read of the row, in one transaction that holds
-- the row's lock across the read's round trip (and --think's delay after each result).
\set post random_zipfian(1, :posts, :skew)
begin;
update post set views_count = views_count + 1 where id = :post;
select views_count from post where id = :post;
commit;
