from goengine.match.cli import main

main()
