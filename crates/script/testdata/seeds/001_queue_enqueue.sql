insert into work_items(owner_id) values(0);
