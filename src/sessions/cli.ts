// ultraplan-server entry (filled in by the sessions work).
process.stderr.write('ultraplan-server: not built yet\n');
process.exit(1);
