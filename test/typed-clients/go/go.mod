module agency-sandbox/typed-clients/go

go 1.19
