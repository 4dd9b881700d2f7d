# Bootstrap of agentcli's persistent shell. The driver substitutes __AC_CTL__ and sends this on stdin.
# Each command runs in a subshell that is its own process group (job control is on), so a timeout
# kills the command and everything it started while this shell lives on. On exit the subshell saves
# its working directory, variables, functions and aliases; this shell loads them only when they
# differ from what it has, so `cd`, `export` and `source venv/bin/activate` persist at little cost.
# Everything per command uses builtins where possible: each fork+exec costs about a millisecond.
set -m
__ac_ctl='__AC_CTL__'
export PAGER=cat GIT_PAGER=cat GIT_EDITOR=true EDITOR=true VISUAL=true TERM=dumb NO_COLOR=1 \
  DEBIAN_FRONTEND=noninteractive PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
  GIT_TERMINAL_PROMPT=0
# A pipe nobody writes to: `read -t` on it is a sleep without starting a process.
exec {__ac_never}<> <(:)
# The driver writes a line to this FIFO when the user interrupts a command (Ctrl-C); without it, only timeouts stop one.
if [ -p "$__ac_ctl/interrupt" ]; then exec {__ac_intr}<>"$__ac_ctl/interrupt"; else __ac_intr=$__ac_never; fi
# Variables the shell had at start are not carried between commands (specials, the environment).
declare -A __ac_base
compgen -v >"$__ac_ctl/base.vars"
mapfile -t __ac_names <"$__ac_ctl/base.vars"
for __ac_v in "${__ac_names[@]}"; do __ac_base[$__ac_v]=1; done
__ac_state=''

__ac_save() { # $1: state file; runs in the command's subshell as it exits
  local v
  compgen -v >"$1.vars"
  mapfile -t __ac_names <"$1.vars"
  {
    printf '[[ $PWD == %q ]] || builtin cd -- %q 2>/dev/null\n' "$PWD" "$PWD"
    export -p
    for v in "${__ac_names[@]}"; do
      [[ -n ${__ac_base[$v]} || $v == __ac_* || ${!v@a} == *x* || ${!v@a} == *r* ]] || declare -p "$v"
    done 2>/dev/null
    declare -f
    alias -p
  } >"$1" 2>/dev/null
}

__ac_launch() { # $1: command id, $2: timeout in seconds (0: none), $3: 1 to check the syntax first
  local cmd="$__ac_ctl/$1.sh" out="$__ac_ctl/$1.out"
  __ac_pid='' __ac_wd=''
  # A multi-line command with a syntax error would run up to the error: refuse it whole instead.
  # (A single line with an error never starts, so it needs no check.)
  if [ "$3" = 1 ] && ! bash -n "$cmd" >"$out" 2>&1; then
    : >"$__ac_ctl/$1.syntax"
    return 2
  fi
  (
    trap "__ac_save '$__ac_ctl/$1.state'" EXIT
    . "$cmd"
  ) </dev/null >>"$out" 2>&1 &
  __ac_pid=$!
  ( # the watchdog: a line on the interrupt FIFO sends SIGINT, the timeout SIGTERM; SIGKILL follows
    if [ "$2" != 0 ]; then read -t "$2" -u "$__ac_intr"; else read -u "$__ac_intr"; fi
    if [ $? = 0 ]; then
      kill -INT -- -"$__ac_pid"
    else
      : >"$__ac_ctl/$1.timeout"
      kill -TERM -- -"$__ac_pid"
    fi
    read -t 2 -u "$__ac_never"
    kill -KILL -- -"$__ac_pid"
  ) >/dev/null 2>&1 &
  __ac_wd=$!
}

__ac_after() { # $1: command id. Stops the watchdog; says (by status) whether the state changed
  local new
  if [ -n "$__ac_wd" ]; then
    kill -KILL -- -"$__ac_wd" 2>/dev/null
    wait "$__ac_wd" 2>/dev/null
  fi
  [ -f "$__ac_ctl/$1.state" ] || return 1
  read -r -d '' new <"$__ac_ctl/$1.state"
  [[ $new != "$__ac_state" ]] || return 1
  __ac_state=$new
  # Forget every exported variable; loading the state brings back those the command kept.
  local v
  for v in $(compgen -e); do
    case "$v" in __ac_* | SHLVL) ;; *) unset "$v" ;; esac
  done
  return 0
}
