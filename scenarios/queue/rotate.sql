-- The rotation variant's rotator: truncates a drained slot of the queue (rotation.sql);
-- counts the slots it truncated.
select rotate_queue() as truncated
\gset
