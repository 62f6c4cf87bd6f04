# Stand-in for PostgreSQL::Test::Utils: records commands instead of running them.
package PostgreSQL::Test::Utils;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Record;

our @EXPORT = qw(command_checks_all append_to_file slurp_file run_log $windows_os);
our $windows_os = 0;
our $tmp_check = $PostgreSQL::Test::Record::ROOT;

sub command_checks_all { PostgreSQL::Test::Record::invocation(@_); return; }

sub append_to_file
{
	my ($path, $text) = @_;
	PostgreSQL::Test::Record::remember_file($path, $text);
	open my $fh, '>>', $path or die "cannot write $path: $!";
	print $fh $text;
	close $fh;
	return;
}

sub slurp_file { return ''; }

# Only used to probe for thread support: threads are supported.
sub run_log
{
	my ($cmd, %redirect) = @_;
	${ $redirect{'2>'} } = '' if ref $redirect{'2>'};
	return 1;
}

1;
