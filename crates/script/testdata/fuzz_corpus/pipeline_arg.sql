\startpipeline
\syncpipeline
\endpipeline extra
