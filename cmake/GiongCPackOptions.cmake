# Read by cpack at packaging time (CPACK_PROJECT_CONFIG_FILE). CPackDeb prepends
# CPACK_PACKAGE_DESCRIPTION_SUMMARY, which CPack defaults to the project's description, to
# every package's description; dropping it lets each package's first description line
# (set per component in GiongPackage.cmake) be its own Debian synopsis.
unset(CPACK_PACKAGE_DESCRIPTION_SUMMARY)
