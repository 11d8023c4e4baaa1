# cli_options.sh - the option parsing of the tools' shell scripts (POSIX sh;
# sourced). One table per script instead of a case loop each:
#
#   . "$here/../cli/cli_options.sh"
#   cli_parse_options eigstream-demo 2,24 "--build=build --frames=frames --iq=iq=1" "$@"
#
# cli_parse_options PROG HELP_LINES SPECS ARGS...: each spec is --name=VAR
# (the option takes a value, assigned to VAR) or --name=VAR=VALUE (a flag:
# VAR=VALUE). -h and --help print lines HELP_LINES ("2,25") of the script
# without their "# " and exit 0; an unknown option or a missing value is
# named on stderr with exit status 2.
cli_parse_options() {
    _cli_prog=$1 _cli_help=$2 _cli_specs=$3
    shift 3
    while [ $# -gt 0 ]; do
        case $1 in
        -h | --help) sed -n "${_cli_help}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        esac
        _cli_found=""
        for _cli_spec in $_cli_specs; do
            [ "$1" = "${_cli_spec%%=*}" ] || continue
            _cli_found=1 _cli_target=${_cli_spec#*=}
            case $_cli_target in
            *=*) eval "${_cli_target%%=*}=\${_cli_target#*=}"; shift ;;
            *)
                [ $# -ge 2 ] || { echo "$_cli_prog: $1 needs a value (try --help)" >&2; exit 2; }
                eval "$_cli_target=\$2"
                shift 2
                ;;
            esac
            break
        done
        [ -n "$_cli_found" ] || { echo "$_cli_prog: unknown option $1 (try --help)" >&2; exit 2; }
    done
}
