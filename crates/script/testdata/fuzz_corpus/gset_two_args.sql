select 1 \gset p_ q_
