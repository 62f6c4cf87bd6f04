# Runs one TAP file with the recording stand-ins; prints the recorded steps as JSON.
# Called by extract.pl as: perl -Ilib run_one.pl FILE.pl ROOT SOURCE
use strict;
use warnings;

my ($pl, $root, $source) = @ARGV;
## no critic
$PostgreSQL::Test::Record::ROOT = $PostgreSQL::Test::Record::ROOT = $root;
srand(20240101);    # the random seed test picks int(rand()): keep the data stable

open my $in, '<', $pl or die "cannot read $pl: $!";
my $code = do { local $/; <$in> };
close $in;

# Result inspectors become recorders (the runner performs these checks).
$code =~ s/^sub check_pgbench_logs\b/sub original_check_pgbench_logs/m;
$code =~ s/^sub check_data_state\b/sub original_check_data_state/m;
my $recorders = <<'PERL';
sub check_pgbench_logs
{
	my ($dir, $prefix, $nb, $min, $max, $re) = @_;
	PostgreSQL::Test::Record::step(
		kind => 'logs', dir => $dir, prefix => $prefix, files => $nb,
		min => $min, max => $max, line => PostgreSQL::Test::Record::regex($re));
	return;
}
sub check_data_state
{
	my ($node, $type) = @_;
	PostgreSQL::Test::Record::step(kind => 'query', sql =>
		'SELECT count(*) FROM pgbench_accounts WHERE filler IS NULL', expect => '0');
	PostgreSQL::Test::Record::step(kind => 'query', sql =>
		'SELECT count(*) FROM pgbench_branches WHERE filler IS NULL', expect => '1');
	PostgreSQL::Test::Record::step(kind => 'query', sql =>
		'SELECT count(*) FROM pgbench_tellers WHERE filler IS NULL', expect => '10');
	PostgreSQL::Test::Record::step(kind => 'query', sql =>
		'SELECT count(*) FROM pgbench_history', expect => '0');
	return;
}
PERL

# TAP output of the stand-in run is noise here (its own checks of server logs and psql
# results fail by design): the JSON is what counts.
require Test::More;
my $builder = Test::More->builder;
$builder->no_ending(1);
open my $null, '>', '/dev/null' or die;
$builder->output($null);
$builder->failure_output($null);
$builder->todo_output($null);
{
	package main;
	local $0 = $pl;
	eval "#line 1 \"$pl\"\n$code\n$recorders\n1;" or die $@;
}
print PostgreSQL::Test::Record::json($source);
