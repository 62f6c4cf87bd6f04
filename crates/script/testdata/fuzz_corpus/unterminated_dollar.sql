select $a$ ; \gset
