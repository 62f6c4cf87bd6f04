create or replace procedure p() begin atomic select 1; select 2; end;
select (;
