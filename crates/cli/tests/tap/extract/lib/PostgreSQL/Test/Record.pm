# Records what PostgreSQL's pgbench TAP tests would do, instead of doing it: the steps
# (SQL, configuration, pgbench invocations, log checks) become JSON for hotbench's runner.
package PostgreSQL::Test::Record;

use strict;
use warnings;
use JSON::PP;
use Test::More ();

our @STEPS;
our %FILES;       # path => contents written since the last invocation
our $ROOT;        # the real temporary directory that stands for @DIR@
our %SEEN;        # test name => invocations so far (case ids are "name #k")

sub step { push @STEPS, {@_}; return; }

# A compiled Perl regex as {re, flags}: the runner needs the pattern and its modifiers.
sub regex
{
	my ($qr) = @_;
	my ($pat, $mods) = re::regexp_pattern($qr);
	return { re => $pat, flags => $mods };
}

sub invocation
{
	my ($cmd, $stat, $out, $err, $name) = @_;
	my @args = @$cmd;
	shift @args;    # 'pgbench'
	my @files;
	for my $path (sort keys %FILES)
	{
		push @files, { path => $path, text => $FILES{$path} };
	}
	%FILES = ();
	my $k = ++$SEEN{$name};
	my %env;
	$env{PGOPTIONS} = $ENV{PGOPTIONS} if defined $ENV{PGOPTIONS};
	# Inside Test::More's todo_start/todo_end (a known upstream flake): failures are TODO.
	my $builder = Test::More->builder;
	my %todo;
	$todo{todo} = ($builder->todo || 'todo') if $builder->in_todo;
	step(
		%todo,
		kind => 'pgbench',
		id => "$name #$k",
		args => \@args,
		files => \@files,
		env => \%env,
		status => $stat + 0,
		stdout => [ map { regex($_) } @$out ],
		stderr => [ map { regex($_) } @$err ]);
	return;
}

sub remember_file
{
	my ($path, $text) = @_;
	$FILES{$path} .= $text;
	return;
}

# Replaces the temporary directory by @DIR@ in every string of the recorded steps.
sub placeholders
{
	my ($v) = @_;
	if (ref $v eq 'HASH')
	{
		return { map { placeholders($_) => placeholders($v->{$_}) } keys %$v };
	}
	if (ref $v eq 'ARRAY') { return [ map { placeholders($_) } @$v ]; }
	return $v if !defined $v || ref $v;
	return $v if $v =~ /^-?\d+$/ && B::svref_2object(\$v)->FLAGS & B::SVf_IOK();
	(my $s = $v) =~ s/\Q$ROOT\E/\@DIR\@/g;
	return $s;
}

sub json
{
	require B;
	my ($source) = @_;
	return JSON::PP->new->canonical->pretty->encode(
		{ source => $source, steps => placeholders(\@STEPS) });
}

1;
