from trilha.cli import main

main()
