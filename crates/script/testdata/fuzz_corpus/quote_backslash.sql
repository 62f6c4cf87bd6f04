select '\;
\gset
