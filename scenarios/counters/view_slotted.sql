\set post random_zipfian(1, :posts, :skew)
\set slot random(0, :slots - 1)
insert into post_view_slot (post_id, slot, n) values (:post, :slot, 1)
on conflict (post_id, slot) do update set n = post_view_slot.n + 1;
