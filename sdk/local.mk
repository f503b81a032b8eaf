# sdk
