/* /* */ select 1;
\if
