# Stand-in for PostgreSQL::Test::Cluster: the node is the harness's server; SQL and
# configuration become steps, pgbench calls become recorded invocations.
package PostgreSQL::Test::Cluster;

use strict;
use warnings;
use PostgreSQL::Test::Record;
use PostgreSQL::Test::Utils;

sub new { my ($class) = @_; return bless {}, $class; }
sub init { return; }
sub start { return; }
sub stop { return; }
sub reload { PostgreSQL::Test::Record::step(kind => 'reload'); return; }
sub basedir { return $PostgreSQL::Test::Record::ROOT; }
sub logfile { return '/dev/null'; }

sub append_conf
{
	my ($self, $file, $text) = @_;
	PostgreSQL::Test::Record::step(kind => 'conf', text => $text);
	return;
}

sub safe_psql
{
	my ($self, $db, $sql) = @_;
	PostgreSQL::Test::Record::step(kind => 'sql', sql => $sql);
	return '';
}

sub psql
{
	my ($self, $db, $sql) = @_;
	PostgreSQL::Test::Record::step(kind => 'sql', sql => $sql);
	return wantarray ? (0, '', '') : 0;
}

# As the real _pgbench_make_files: files sorted by name, -f with the weight kept.
sub pgbench
{
	my ($self, $opts, $stat, $out, $err, $name, $files, @args) = @_;
	my @file_opts;
	if (defined $files)
	{
		for my $fn (sort keys %$files)
		{
			my $filename = $self->basedir . '/' . $fn;
			push @file_opts, '-f', $filename;
			$filename =~ s/\@\d+$//;
			PostgreSQL::Test::Record::remember_file($filename, $$files{$fn});
		}
	}
	PostgreSQL::Test::Record::invocation(
		[ 'pgbench', split(/\s+/, $opts), @file_opts, @args ],
		$stat, $out, $err, $name);
	return;
}

1;
