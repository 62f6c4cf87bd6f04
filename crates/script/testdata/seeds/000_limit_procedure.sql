\set account random(1,4)
\set spend random(1,10)
call spend_from_allowance(:account,:spend);
