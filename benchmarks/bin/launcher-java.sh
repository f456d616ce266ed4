# Sourced by the scripts here (needs $root, the checkout): the java binary and the server JVM
# options that ./tidemark would use on this machine (it picks the newest JDK >= 17 and adds options
# for Java 25), from TIDEMARK_PRINT_COMMAND=1, so that benchmark figures are the launcher's.
# Sets tm_java and tm_java_opts.
launcher_line="$(env -u JAVA_OPTS TIDEMARK_PRINT_COMMAND=1 "$root/tidemark")"
launcher_line="${launcher_line% -jar *}"
tm_java="${launcher_line%% *}"
tm_java_opts="${launcher_line#"$tm_java"}"
tm_java_opts="${tm_java_opts# }"
