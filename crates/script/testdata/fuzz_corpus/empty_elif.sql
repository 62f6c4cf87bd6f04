\if 1
\elif
\endif
