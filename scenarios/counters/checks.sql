-- Views: counters (plus slots) against what the clients committed and, for events, the log.
-- A transaction in doubt (cancelled at the end, or cut by a restart) may have committed.
select 'views counted = views committed' as name,
       total between {{committed:main}} and {{committed:main}} + {{in_doubt:main}}
       or {{committed:main}} = 0 or not is_views as ok,
       format('%s views counted, %s view transactions committed, %s in doubt', total, {{committed:main}}, {{in_doubt:main}}) as detail
from (select (select coalesce(sum(views_count), 0) from post)
           + (select coalesce(sum(n), 0) from post_view_slot) as total,
             (select count(*) from comment) = 0 as is_views) s;

select 'each post''s views = its events' as name,
       coalesce(bool_and(p.views_count = coalesce(l.n, 0)), true) as ok,
       coalesce(string_agg(format('post %s: %s counted, %s events', p.id, p.views_count, coalesce(l.n, 0)), '; ')
                filter (where p.views_count <> coalesce(l.n, 0)), '') as detail
from post p left join (select post_id, count(*) as n from view_log group by post_id) l on l.post_id = p.id
where exists (select 1 from view_log);

select 'no event left behind' as name, count(*) = 0 as ok,
       format('%s view events not rolled up', count(*)) as detail
from view_event;

select 'each post''s comments_count = its comments' as name,
       coalesce(bool_and(p.comments_count = coalesce(c.n, 0)), true) as ok,
       coalesce(string_agg(format('post %s: %s counted, %s comments', p.id, p.comments_count, coalesce(c.n, 0)), '; ')
                filter (where p.comments_count <> coalesce(c.n, 0)), '') as detail
from post p left join (select post_id, count(*) as n from comment group by post_id) c on c.post_id = p.id;
