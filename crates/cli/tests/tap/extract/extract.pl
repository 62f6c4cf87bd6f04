#!/usr/bin/perl
# Turns PostgreSQL's pgbench TAP tests into data for hotbench's runner (tests/pgbench_tap.rs).
#
#   perl extract.pl SOURCE_TREE VERSION OUTDIR
#
# SOURCE_TREE is an unpacked PostgreSQL source (e.g. `apt-get source postgresql-15`); the
# files src/bin/pgbench/t/00{1,2}_*.pl are run with stand-ins for PostgreSQL::Test::Cluster
# and ::Utils (lib/ here) that record each step instead of running it, and the steps are
# written to OUTDIR/001_pgbench_with_server.json and OUTDIR/002_pgbench_no_server.json.
# Helpers that inspect results (check_pgbench_logs, check_data_state) are replaced by
# recorders so the runner can do those checks itself.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);

my ($tree, $version, $outdir) = @ARGV;
die "usage: extract.pl SOURCE_TREE VERSION OUTDIR\n" unless defined $outdir;

for my $test ('001_pgbench_with_server', '002_pgbench_no_server')
{
	my $pl = "$tree/src/bin/pgbench/t/$test.pl";
	my $root = tempdir(CLEANUP => 1);
	# Each test runs in its own perl, so module state starts fresh.
	my $here = dirname(__FILE__);
	open my $run, '-|', $^X, "-I$here/lib", "$here/run_one.pl", $pl, $root,
	  "PostgreSQL $version src/bin/pgbench/t/$test.pl"
	  or die "cannot run perl: $!";
	my $json = do { local $/; <$run> };
	close $run;
	die "extracting $pl failed\n" if $? != 0;
	open my $fh, '>', "$outdir/$test.json" or die "cannot write $outdir/$test.json: $!";
	print $fh $json;
	close $fh or die "cannot write $outdir/$test.json: $!";
}
