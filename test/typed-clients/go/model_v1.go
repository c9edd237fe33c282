package main

import "encoding/json"

// The version 1 client: `id` for the client number, allowCrossSell and clientType at the top
// level, integer ids on sub-records, and policies of their own shape (linesOfBusiness[] with
// drivers and vehicles, state, currentPremium, no modified), as the one raw live version 1
// answer in the public record shows.

type ClientV1 struct {
	ID             *int32       `json:"id"`
	AllowCrossSell *bool        `json:"allowCrossSell"`
	ClientType     *string      `json:"clientType"`
	Details        *DetailsV1   `json:"details"`
	People         *[]PersonV1  `json:"people"`
	Contacts       *[]ContactV1 `json:"contacts"`
	Claims         *[]ClaimV1   `json:"claims"`
	Policies       *[]PolicyV1  `json:"policies"`
}

type DetailsV1 struct {
	Modified        *string  `json:"modified"`
	Status          *string  `json:"status"`
	IsPersonal      *bool    `json:"isPersonal"`
	IsCommercial    *bool    `json:"isCommercial"`
	CompanyName     *string  `json:"companyName"`
	DbaName         *string  `json:"dbaName"`
	BusinessType    *string  `json:"businessType"`
	FeinNum         *string  `json:"feinNum"`
	Website         *string  `json:"website"`
	AgencyNum       *string  `json:"agencyNum"`
	OfficeID        *int32   `json:"officeId"`
	ClientSince     *string  `json:"clientSince"`
	Source          *string  `json:"source"`
	Producer        *string  `json:"producer"`
	Csr             *string  `json:"csr"`
	MainContacts    *[]int32 `json:"mainContacts"`
	MailingAddress  *Address `json:"mailingAddress"`
	PhysicalAddress *Address `json:"physicalAddress"`
}

type PersonV1 struct {
	ID                  *int32  `json:"id"`
	Modified            *string `json:"modified"`
	Title               *string `json:"title"`
	FirstName           *string `json:"firstName"`
	MiddleName          *string `json:"middleName"`
	LastName            *string `json:"lastName"`
	MainContactType     *string `json:"mainContactType"`
	Relationship        *string `json:"relationship"`
	DateOfBirth         *string `json:"dateOfBirth"`
	Gender              *string `json:"gender"`
	Occupation          *string `json:"occupation"`
	MaritalStatus       *string `json:"maritalStatus"`
	DriverLicenseNumber *string `json:"driverLicenseNumber"`
}

type ContactV1 struct {
	ID               *int32  `json:"id"`
	Modified         *string `json:"modified"`
	Type             *string `json:"type"`
	Data             *string `json:"data"`
	PersonID         *int32  `json:"personId"`
	Description      *string `json:"description"`
	IsBillingContact *bool   `json:"isBillingContact" nonnull:"bool IsBillingContact"`
	AllowMassEmail   *bool   `json:"allowMassEmail" nonnull:"bool AllowMassEmail"`
	Priority         *int32  `json:"priority" nonnull:"int Priority"`
}

type ClaimV1 struct {
	ID           *int32   `json:"id"`
	Modified     *string  `json:"modified"`
	ClaimNumber  *string  `json:"claimNumber"`
	ClaimStatus  *string  `json:"claimStatus"`
	LossDate     *string  `json:"lossDate"`
	LossAmount   *float64 `json:"lossAmount"`
	PolicyNumber *string  `json:"policyNumber"`
}

type LineOfBusinessV1 struct {
	ID        *int32       `json:"id"`
	Code      *string      `json:"code"`
	Status    *string      `json:"status"`
	Coverages *[]Record    `json:"coverages"`
	Drivers   *[]DriverV1  `json:"drivers"`
	Vehicles  *[]VehicleV1 `json:"vehicles"`
	Locations *[]Record    `json:"locations"`
}

// DriverV1: the sample's drivers carry the person's name, relationship and operatorStatus.
type DriverV1 struct {
	ID             *int32  `json:"id"`
	FirstName      *string `json:"firstName"`
	LastName       *string `json:"lastName"`
	Relationship   *string `json:"relationship"`
	OperatorStatus *string `json:"operatorStatus"`
	LicenseNumber  *string `json:"licenseNumber"`
	LicenseState   *string `json:"licenseState"`
}

// VehicleV1 carries its coverages, premium a JSON number in version 1.
type VehicleV1 struct {
	ID        *int32        `json:"id"`
	Year      *string       `json:"year"`
	Make      *string       `json:"make"`
	Coverages *[]CoverageV1 `json:"coverages"`
}

type CoverageV1 struct {
	ID           *int32   `json:"id"`
	Code         *string  `json:"code"`
	Description  *string  `json:"description"`
	DisplayOrder *int32   `json:"displayOrder"`
	Limits       *string  `json:"limits"`
	Deductibles  *string  `json:"deductibles"`
	Premium      *float64 `json:"premium"`
	Percent      *float64 `json:"percent"`
}

type PolicyV1 struct {
	ID              *int32              `json:"id"`
	PolicyNumber    *string             `json:"policyNumber"`
	Carrier         *string             `json:"carrier"`
	Naic            *string             `json:"naic"`
	Status          *string             `json:"status"`
	SubStatus       *string             `json:"subStatus"`
	StatusDate      *string             `json:"statusDate"`
	Type            *string             `json:"type"`
	TypeName        *string             `json:"typeName"`
	Title           *string             `json:"title"`
	ApplicationType *string             `json:"applicationType"`
	State           *string             `json:"state"`
	EffectiveDate   *string             `json:"effectiveDate"`
	ExpirationDate  *string             `json:"expirationDate"`
	InceptionDate   *string             `json:"inceptionDate"`
	SoldDate        *string             `json:"soldDate"`
	Term            *string             `json:"term"`
	CurrentPremium  *float64            `json:"currentPremium"`
	QuotedPremium   *float64            `json:"quotedPremium"`
	PaymentPlan     *string             `json:"paymentPlan"`
	Program         *string             `json:"program"`
	OfficeID        *int32              `json:"officeId"`
	DisplayOrder    *int32              `json:"displayOrder"`
	IsArchived      *bool               `json:"isArchived"`
	Rater           *int32              `json:"rater"`
	Coverages       *[]Record           `json:"coverages"`
	LinesOfBusiness *[]LineOfBusinessV1 `json:"linesOfBusiness"`
	Locations       *[]Record           `json:"locations"`
	// Version 1 policies carry no modified: present at all (even null) is a failure.
	Modified json.RawMessage `json:"modified"`
}
