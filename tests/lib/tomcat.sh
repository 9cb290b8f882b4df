# Stock Debian Tomcat (package tomcat10) for the integration suites: install,
# CATALINA_BASE directories with Debian's configuration (and, when asked, the
# Manager webapp of tomcat10-admin), a server.xml with one HTTPS connector on
# 127.0.0.1, start/stop, and Tomcat's log judged for TLS
# errors. One instance at a time is "current": BASE and PIDFILE name it.
# shellcheck shell=bash
#
#   source tests/lib/suite.sh; source tests/lib/tomcat.sh; tomcat_setup

# tomcat_setup: installs tomcat10 and tomcat10-admin (and wrk, curl, openssl, python3); CATALINA_HOME, JAVA_HOME, TOMCAT_VERSION.
tomcat_setup() {
  # libtcnative-1 is what `apt-get install tomcat10` brings along (a Recommends, which need_pkgs skips):
  # with it the suite runs on the host shape users have, where Tomcat logs a SEVERE line of its own.
  need_pkgs tomcat10 tomcat10-admin libtcnative-1 wrk curl openssl python3 || not_run "cannot install tomcat10/wrk"
  # Installing the package may start the system service where systemd runs; it must not stay up.
  if command -v systemctl >/dev/null && systemctl is-active --quiet tomcat10 2>/dev/null; then
    systemctl stop tomcat10 && systemctl disable --quiet tomcat10 2>/dev/null
  fi
  CATALINA_HOME=/usr/share/tomcat10
  [[ -x $CATALINA_HOME/bin/catalina.sh ]] || not_run "no $CATALINA_HOME/bin/catalina.sh after installing tomcat10"
  export JAVA_HOME=${JAVA_HOME:-$(jdk17_home)}
  TOMCAT_VERSION=$("$CATALINA_HOME/bin/version.sh" 2>/dev/null | sed -n 's/^Server number: *//p')
}

PIDFILE=
stop_tomcat() {
  [[ -n $PIDFILE && -s $PIDFILE ]] || return 0
  local pid; pid=$(cat "$PIDFILE")
  CATALINA_BASE=$BASE CATALINA_PID=$PIDFILE "$CATALINA_HOME/bin/catalina.sh" stop 15 -force >/dev/null 2>&1
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  PIDFILE=
}

# new_base DIR: a CATALINA_BASE with Debian's stock configuration and ROOT webapp
new_base() {
  BASE=$1
  mkdir -p "$BASE"/{conf,lib,logs,webapps,work,temp,bin}
  cp -rL /etc/tomcat10/. "$BASE/conf/"
  # tomcat10-admin puts the Manager's and Host Manager's descriptors there: deployed only when asked (deploy_manager)
  rm -f "$BASE"/conf/Catalina/localhost/*.xml
  cp -r /var/lib/tomcat10/webapps/ROOT "$BASE/webapps/ROOT"
  # Tomcat logs a failed handshake (with its cause) only at FINE, on a logger of its own
  echo 'org.apache.tomcat.util.net.NioEndpoint.handshake.level = FINE' >>"$BASE/conf/logging.properties"
}

# deploy_manager USER PASSWORD: Debian's Manager webapp (tomcat10-admin) at /manager in BASE, USER
# with role manager-script (the text interface) in BASE's tomcat-users.xml; server_xml then adds
# the stock UserDatabase realm. Call it before server_xml.
MANAGER_DOCBASE=/usr/share/tomcat10-admin/manager
deploy_manager() {
  [[ -f $MANAGER_DOCBASE/WEB-INF/web.xml ]] || return 1
  mkdir -p "$BASE/conf/Catalina/localhost"
  # A descriptor here replaces the webapp's META-INF/context.xml, so the loopback-only valve that
  # file carries would be lost (Debian's own /etc/tomcat10/Catalina/localhost/manager.xml drops it):
  # it is restated.
  cat >"$BASE/conf/Catalina/localhost/manager.xml" <<XML
<Context docBase="$MANAGER_DOCBASE" privileged="true" antiResourceLocking="false">
  <Valve className="org.apache.catalina.valves.RemoteCIDRValve" allow="127.0.0.0/8, ::1/128" />
</Context>
XML
  cat >"$BASE/conf/tomcat-users.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<tomcat-users xmlns="http://tomcat.apache.org/xml" version="1.0">
  <role rolename="manager-script" />
  <user username="$1" password="$2" roles="manager-script" />
</tomcat-users>
XML
  chmod 600 "$BASE/conf/tomcat-users.xml"
}

# server_xml PORT CONNECTOR-ATTRS CERTIFICATE-ELEMENT [CONNECTOR-CHILDREN]: Debian's listeners, one HTTPS connector on 127.0.0.1
server_xml() {
  cat >"$BASE/conf/server.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Listener className="org.apache.catalina.startup.VersionLoggerListener" />
  <Listener className="org.apache.catalina.core.AprLifecycleListener" />
  <Listener className="org.apache.catalina.core.JreMemoryLeakPreventionListener" />
  <Listener className="org.apache.catalina.mbeans.GlobalResourcesLifecycleListener" />
  <Listener className="org.apache.catalina.core.ThreadLocalLeakPreventionListener" />
$(realm_xml global)
  <Service name="Catalina">
    <Connector protocol="org.apache.coyote.http11.Http11NioProtocol" address="127.0.0.1" port="$1"
               SSLEnabled="true" scheme="https" secure="true" maxKeepAliveRequests="-1" $2>
      ${4:-}
      <SSLHostConfig protocols="TLSv1.2+TLSv1.3">
        $3
      </SSLHostConfig>
    </Connector>
    <Engine name="Catalina" defaultHost="localhost">
$(realm_xml engine)
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false">
        <Valve className="org.apache.catalina.valves.AccessLogValve" directory="logs" prefix="access" suffix=".log"
               rotatable="false" buffered="false" pattern="%r|%{jakarta.servlet.request.ssl_session_mgr}r" />
      </Host>
    </Engine>
  </Service>
</Server>
XML
}

# realm_xml global|engine: Debian's stock user database and realm, where deploy_manager ran
realm_xml() {
  [[ -f $BASE/conf/Catalina/localhost/manager.xml ]] || return 0
  if [[ $1 == global ]]; then
    echo '  <GlobalNamingResources>
    <Resource name="UserDatabase" auth="Container" type="org.apache.catalina.UserDatabase"
              factory="org.apache.catalina.users.MemoryUserDatabaseFactory" pathname="conf/tomcat-users.xml" />
  </GlobalNamingResources>'
  else
    echo '      <Realm className="org.apache.catalina.realm.LockOutRealm">
        <Realm className="org.apache.catalina.realm.UserDatabaseRealm" resourceName="UserDatabase" />
      </Realm>'
  fi
}

start_tomcat() { # waits for the port; returns non-zero if Tomcat did not come up
  PIDFILE=$BASE/tomcat.pid
  CATALINA_BASE=$BASE CATALINA_PID=$PIDFILE CATALINA_OPTS="-Xmx512m ${EXTRA_OPTS:-}" \
    "$CATALINA_HOME/bin/catalina.sh" start >"$BASE/logs/start.out" 2>&1
  local i
  for i in $(seq 1 120); do
    if grep -q "Server startup in" "$BASE"/logs/catalina*.log "$BASE/logs/catalina.out" 2>/dev/null; then
      return 0
    fi
    [[ -s $PIDFILE ]] && ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null && break
    sleep 0.5
  done
  return 1
}

# the localhost log is where a webapp's failure goes (the Manager's, for one)
logs() { cat "$BASE"/logs/catalina*.log "$BASE"/logs/localhost*.log "$BASE/logs/catalina.out" 2>/dev/null; }

# log_records tls|other: Tomcat's log as records (a juli line and the lines that continue it, such as
# a stack trace), printing the first line of each record that counts. "tls" is what the suite fails on:
# a WARNING or SEVERE from tlsbridge, Tomcat's connector or TLS layers, or mentioning TLS, SSL,
# certificates, handshakes or a connector; and, at any level, a failed handshake, a
# javax.net.ssl exception, a tlsbridge stack frame, tlsbridge reporting an error, or a JVM crash.
# Records matching the regex JUDGE_IGNORE (if set) are skipped.
# "expected" prints the first line of each record that matches $EXPECTED_LOG (a regular
# expression): an error the suite caused on purpose, left out of "tls" and "other".
# "other" is every other WARNING or SEVERE: stock lines about something else, such as
# AprLifecycleListener refusing Debian's libtcnative-1 1.2.35 (docs/tomcat.md), shown but not judged.
log_records() {
  logs | awk -v mode="$1" -v ignore="${JUDGE_IGNORE:-}" -v expected="${EXPECTED_LOG:-}" '
    function flush(  tls, warn, n, L) {
      if (rec == "") return
      if (expected != "" && rec ~ expected) { if (mode == "expected") print first; rec = ""; return }
      if (ignore != "" && rec ~ ignore) { rec = ""; return }
      warn = lvl == "SEVERE" || lvl == "WARNING"
      tls = (warn && (logger ~ /^org\.(tlsbridge|apache\.tomcat\.util\.net|apache\.coyote)\./ ||
                      tolower(rec) ~ /tlsbridge|ssl|tls|handshake|certificate|connector/)) ||
            rec ~ /Handshake failed|javax\.net\.ssl\.[A-Za-z]*Exception|at org\.tlsbridge\.|A fatal error has been detected/ ||
            tolower(first) ~ /tlsbridge.*(error|fail)/
      if (mode == "tls" && tls) {
        # with the line that says why (the exception under "Handshake failed"), if there is one
        n = split(rec, L, "\n"); sub(/^[ \t]+/, "", L[2])
        print first (n > 1 && L[2] != "" ? " | " L[2] : "")
      } else if (mode == "other" && warn && !tls) print first
      rec = ""
    }
    /^[0-9][0-9]-[A-Z][a-z][a-z]-[0-9][0-9][0-9][0-9] [0-9:.]+ [A-Z]+ \[/ {
      flush(); first = $0; rec = $0; lvl = $3; logger = ""
      if (match($0, /\] [^ ]+/)) logger = substr($0, RSTART + 2, RLENGTH - 2)
      next
    }
    { if (rec == "") { first = $0; lvl = ""; logger = "" }; rec = rec "\n" $0 }
    END { flush() }'
}

# judge_log NAME: one check on the TLS records; other warnings are printed and noted, not judged.
judge_log() {
  local errs other
  errs=$(log_records tls | head -5)
  other=$(log_records other | sed -E 's/^[0-9]{2}-[A-Za-z]{3}-[0-9]{4} [0-9:.]+ //' | sort -u)
  [[ -n $errs ]] && echo "$errs" | sed 's/^/  log: /'
  if [[ -n $other ]]; then
    echo "$other" | sed 's/^/  not judged (not about TLS): /'
    echo "NOTE not judged: $(head -1 <<<"$other" | sed -E 's/ \[[^]]*\] org\.apache\.[a-z.]*\./ /' | cut -c1-100)"
  fi
  check "$1" test -z "$errs"
}
