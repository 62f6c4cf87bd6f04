create table post (
    id             bigint primary key,
    views_count    bigint not null default 0,
    comments_count bigint not null default 0
);
insert into post (id) select g from generate_series(1, {{posts}}) as g;

-- Slotted counter: the post's views are views_count + the sum of its slots.
create table post_view_slot (
    post_id bigint not null,
    slot    int    not null,
    n       bigint not null default 0,
    primary key (post_id, slot)
);

-- Append-only view events waiting for the rollup, and the log of every view ever made.
create table view_event (post_id bigint not null);
create table view_log (post_id bigint not null);

-- Comments record the transaction that wrote them.
create table comment (
    id      bigint generated always as identity primary key,
    post_id bigint not null,
    body    text   not null,
    txid    bigint not null default txid_current()
);
create index comment_txid on comment (txid);

-- The snapshot of the last comment rollup.
create table comment_rollup (snap txid_snapshot not null);
insert into comment_rollup values (txid_current_snapshot());

-- Events: move what is there into the counters (delete … returning sees only committed
-- events, and each is moved once).
create function rollup_views() returns bigint language sql as $fn$
    with moved as (
        delete from view_event returning post_id
    ), per_post as (
        select post_id, count(*) as n from moved group by post_id
    ), upd as (
        update post p set views_count = p.views_count + pp.n
        from per_post pp where p.id = pp.post_id
        returning pp.n
    )
    select coalesce(sum(n), 0)::bigint from upd;
$fn$;

-- Comments: count those whose transaction is visible in a new snapshot but was not in the
-- previous one. Transactions still running now are counted by a later rollup.
create function rollup_comments() returns bigint language plpgsql as $fn$
declare
    old_snap txid_snapshot;
    new_snap txid_snapshot := txid_current_snapshot();
    added bigint;
begin
    select snap into old_snap from comment_rollup for update;
    with fresh as (
        select post_id, count(*) as n from comment
         where txid >= txid_snapshot_xmin(old_snap)
           and txid_visible_in_snapshot(txid, new_snap)
           and not txid_visible_in_snapshot(txid, old_snap)
         group by post_id
    ), upd as (
        update post p set comments_count = p.comments_count + f.n
        from fresh f where p.id = f.post_id
        returning f.n
    )
    select coalesce(sum(n), 0) into added from upd;
    update comment_rollup set snap = new_snap;
    return added;
end;
$fn$;
