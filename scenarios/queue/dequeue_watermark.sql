-- One job after this consumer's watermark (a periodic sweep from the start).
select take_after_watermark(1, interval '{{sweep_s}} seconds') as hotbench_ok
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
