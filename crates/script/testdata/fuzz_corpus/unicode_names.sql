\set é :é
\sleep :é ms
select :é, :"é", :{?é};
