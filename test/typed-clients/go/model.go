package main

import "encoding/json"

// The read model of versions 4.0 and 3.0, typed as the contract's section A types it. Pointer
// fields tell a missing or null value from a zero one: check.go requires the fields the client
// model marks non-optional. encoding/json refuses a JSON value of another type (a number for a
// string, a fraction or an out-of-range number for an int32) on its own.

// AgencyV4 is an entry of the 4.0 agencies listing (3.0 and 1 list bare int ids).
type AgencyV4 struct {
	AgencyID *int32    `json:"agencyId"`
	Scopes   *[]string `json:"scopes"`
}

// Office is an office of every version (only 4.0 carries archived).
type Office struct {
	OfficeID          *int32  `json:"officeId"`
	OfficeDescription *string `json:"officeDescription"`
	SubAgencyName     *string `json:"subAgencyName"`
	PrimaryOffice     *bool   `json:"primaryOffice"`
	AddressLine1      *string `json:"addressLine1"`
	AddressLine2      *string `json:"addressLine2"`
	City              *string `json:"city"`
	State             *string `json:"state"`
	Zipcode           *string `json:"zipcode"`
	Archived          *bool   `json:"archived"`
}

// User is an active agency user (4.0).
type User struct {
	UserID     *int32  `json:"userId"`
	Username   *string `json:"username"`
	FirstName  *string `json:"firstName"`
	LastName   *string `json:"lastName"`
	Email      *string `json:"email"`
	HomeOffice *int32  `json:"homeOffice"`
}

// Client is a client of versions 4.0 and 3.0: groups not requested are absent.
type Client struct {
	ClientNumber *int32     `json:"clientNumber"`
	Details      *Details   `json:"details"`
	People       *[]Person  `json:"people"`
	Contacts     *[]Contact `json:"contacts"`
	Claims       *[]Claim   `json:"claims"`
	Policies     *[]Policy  `json:"policies"`
	Invoices     *[]Invoice `json:"invoices"`
}

type Address struct {
	Address1    *string `json:"address1"`
	Address2    *string `json:"address2"`
	City        *string `json:"city"`
	State       *string `json:"state"`
	Zip         *string `json:"zip"`
	County      *string `json:"county"`
	CountryCode *string `json:"countryCode"`
}

type Details struct {
	ID              *string   `json:"id"`
	Modified        *string   `json:"modified"`
	ClientType      *string   `json:"clientType"`
	Status          *string   `json:"status"`
	IsPersonal      *bool     `json:"isPersonal"`
	IsCommercial    *bool     `json:"isCommercial"`
	CompanyName     *string   `json:"companyName"`
	DbaName         *string   `json:"dbaName"`
	BusinessType    *string   `json:"businessType"`
	FeinNum         *string   `json:"feinNum"`
	Website         *string   `json:"website"`
	AgencyNum       *string   `json:"agencyNum"`
	OfficeID        *int32    `json:"officeId"`
	ClientSince     *string   `json:"clientSince"`
	AllowCrossSell  *bool     `json:"allowCrossSell"`
	Source          *string   `json:"source"`
	Producer        *string   `json:"producer"`
	Csr             *string   `json:"csr"`
	MainContacts    *[]string `json:"mainContacts"`
	MailingAddress  *Address  `json:"mailingAddress"`
	PhysicalAddress *Address  `json:"physicalAddress"`
}

type Person struct {
	ID                  *string `json:"id"`
	Modified            *string `json:"modified"`
	LegacyID            *int32  `json:"legacyId"`
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

// Contact: a production C# sync declares `int Priority`, `bool AllowMassEmail` and
// `bool IsBillingContact` non-nullable: absent reads as 0 or false, null throws.
type Contact struct {
	ID               *string `json:"id"`
	Modified         *string `json:"modified"`
	LegacyID         *int32  `json:"legacyId"`
	Type             *string `json:"type"`
	Data             *string `json:"data"`
	PersonID         *string `json:"personId"`
	Description      *string `json:"description"`
	IsBillingContact *bool   `json:"isBillingContact" nonnull:"bool IsBillingContact"`
	AllowMassEmail   *bool   `json:"allowMassEmail" nonnull:"bool AllowMassEmail"`
	Priority         *int32  `json:"priority" nonnull:"int Priority"`
}

type Claim struct {
	ID           *string  `json:"id"`
	Modified     *string  `json:"modified"`
	LegacyID     *int32   `json:"legacyId"`
	ClaimNumber  *string  `json:"claimNumber"`
	ClaimStatus  *string  `json:"claimStatus"`
	LossDate     *string  `json:"lossDate"`
	LossAmount   *float64 `json:"lossAmount"`
	PolicyNumber *string  `json:"policyNumber"`
}

type LineOfBusiness struct {
	Code *string `json:"code"`
	Name *string `json:"name"`
}

// Coverage premium is a string on the wire ("412.00").
type Coverage struct {
	Code        *string `json:"code"`
	Description *string `json:"description"`
	Limits      *string `json:"limits"`
	Deductibles *string `json:"deductibles"`
	Premium     *string `json:"premium"`
}

type AdditionalInterest struct {
	ID         *string `json:"id"`
	IsPayor    *bool   `json:"isPayor"`
	ParentID   *string `json:"parentId"`
	ParentType *string `json:"parentType"`
	Rank       *int32  `json:"rank"`
}

// Driver carries its person and role: production v4 callers find the named insured among the
// drivers by relationship, personalInfo.status and name, into non-nullable members.
type Driver struct {
	PersonID      *string       `json:"personId" nonnull:"Guid PersonId"`
	FirstName     *string       `json:"firstName" nonnull:"string FirstName"`
	LastName      *string       `json:"lastName" nonnull:"string LastName"`
	Relationship  *string       `json:"relationship" nonnull:"string Relationship"`
	PersonalInfo  *PersonalInfo `json:"personalInfo" nonnull:"PersonalInfo PersonalInfo"`
	LicenseNumber *string       `json:"licenseNumber" nonnull:"string LicenseNumber"`
	LicenseState  *string       `json:"licenseState" nonnull:"string LicenseState"`
}

type PersonalInfo struct {
	Status *string `json:"status" nonnull:"string Status"`
}

// Record is a record whose fields the contract leaves open (autos, boats, locations): it must
// be a JSON object.
type Record = map[string]json.RawMessage

type Policy struct {
	ID                  *string               `json:"id"`
	Modified            *string               `json:"modified"`
	LegacyID            *int32                `json:"legacyId"`
	PolicyNumber        *string               `json:"policyNumber"`
	PolicyIndex         *int32                `json:"policyIndex"`
	Carrier             *string               `json:"carrier"`
	WritingCarrier      *string               `json:"writingCarrier"`
	Naic                *string               `json:"naic"`
	Status              *string               `json:"status"`
	SubStatus           *string               `json:"subStatus"`
	StatusDate          *string               `json:"statusDate"`
	Type                *string               `json:"type"`
	Title               *string               `json:"title"`
	ApplicationType     *string               `json:"applicationType"`
	PolicyState         *string               `json:"policyState"`
	EffectiveDate       *string               `json:"effectiveDate"`
	ExpirationDate      *string               `json:"expirationDate"`
	InceptionDate       *string               `json:"inceptionDate"`
	SoldDate            *string               `json:"soldDate"`
	Term                *string               `json:"term"`
	Premium             *float64              `json:"premium"`
	QuotedPremium       *float64              `json:"quotedPremium"`
	PaymentPlan         *string               `json:"paymentPlan"`
	PremiumMode         *string               `json:"premiumMode"`
	NumberOfTerms       *int32                `json:"numberOfTerms"`
	Program             *string               `json:"program"`
	RaterCode           *int32                `json:"raterCode"`
	BillingType         *string               `json:"billingType"`
	OfficeID            *int32                `json:"officeId"`
	Agent1              *string               `json:"agent1"`
	Agent2              *string               `json:"agent2"`
	Agent3              *string               `json:"agent3"`
	LoBs                *[]LineOfBusiness     `json:"loBs"`
	Coverages           *[]Coverage           `json:"coverages"`
	Drivers             *[]Driver             `json:"drivers"`
	Autos               *[]Record             `json:"autos"`
	AdditionalInterests *[]AdditionalInterest `json:"additionalInterests"`
	Locations           *[]Record             `json:"locations"`
	Boats               *[]Record             `json:"boats"`
	BoatOperators       *[]Record             `json:"boatOperators"`
	LocationReferences  *[]json.RawMessage    `json:"locationReferences"`
}

type Invoice struct {
	ID            *string  `json:"id"`
	PolicyID      *string  `json:"policyId"`
	InvoiceNumber *string  `json:"invoiceNumber"`
	Date          *string  `json:"date"`
	DueDate       *string  `json:"dueDate"`
	Total         *float64 `json:"total"`
	Balance       *float64 `json:"balance"`
}
